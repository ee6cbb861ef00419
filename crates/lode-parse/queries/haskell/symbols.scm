; haskell symbols: to be written
