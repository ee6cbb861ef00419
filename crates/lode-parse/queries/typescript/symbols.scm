; typescript symbols: to be written
