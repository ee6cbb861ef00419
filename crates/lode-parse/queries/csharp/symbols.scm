; csharp symbols: to be written
