; ruby symbols: to be written
