; kotlin symbols: to be written
