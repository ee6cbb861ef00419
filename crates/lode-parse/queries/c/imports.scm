; c imports: to be written
