; haskell imports: to be written
