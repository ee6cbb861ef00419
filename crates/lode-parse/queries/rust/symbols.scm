; rust symbols: to be written
