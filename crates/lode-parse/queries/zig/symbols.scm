; zig symbols: to be written
