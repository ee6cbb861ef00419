; elixir imports: to be written
