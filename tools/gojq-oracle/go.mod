module workloadmap/tools/gojq-oracle

go 1.24.0

require github.com/itchyny/gojq v0.12.19

require github.com/itchyny/timefmt-go v0.1.8 // indirect
