; go imports: to be written
