; cpp imports: to be written
