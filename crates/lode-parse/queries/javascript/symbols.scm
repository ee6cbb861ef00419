; javascript symbols: to be written
