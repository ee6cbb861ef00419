; kotlin imports: to be written
