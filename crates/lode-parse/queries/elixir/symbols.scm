; elixir symbols: to be written
