; cpp symbols: to be written
