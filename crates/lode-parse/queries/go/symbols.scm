; go symbols: to be written
