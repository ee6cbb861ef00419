; rust calls: to be written
