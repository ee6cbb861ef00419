; lua symbols: to be written
