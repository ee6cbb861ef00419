; haskell calls: to be written
