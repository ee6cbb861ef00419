; c calls: to be written
