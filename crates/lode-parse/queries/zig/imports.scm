; zig imports: to be written
