module dgadstatic

go 1.19
