; php symbols: to be written
