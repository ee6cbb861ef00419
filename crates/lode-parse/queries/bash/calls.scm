; bash calls: to be written
