; lua imports: to be written
