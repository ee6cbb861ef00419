; lua calls: to be written
