; java symbols: to be written
