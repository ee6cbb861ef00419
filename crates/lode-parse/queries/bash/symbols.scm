; bash symbols: to be written
