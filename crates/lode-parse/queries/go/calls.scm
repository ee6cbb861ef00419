; go calls: to be written
