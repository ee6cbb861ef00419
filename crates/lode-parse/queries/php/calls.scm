; php calls: to be written
