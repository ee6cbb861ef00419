; scala symbols: to be written
