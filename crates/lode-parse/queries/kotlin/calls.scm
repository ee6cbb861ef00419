; kotlin calls: to be written
