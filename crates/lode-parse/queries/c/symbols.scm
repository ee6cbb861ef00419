; c symbols: to be written
