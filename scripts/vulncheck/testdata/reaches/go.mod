module example.com/reaches

go 1.26
