; zig calls: to be written
