; swift calls: to be written
