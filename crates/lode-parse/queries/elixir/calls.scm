; elixir calls: to be written
