; csharp imports: to be written
