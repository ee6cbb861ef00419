; swift symbols: to be written
