; rust imports: to be written
