module github.com/ordersink/orders-consumer/tools/bicepcheck

go 1.26.8

require (
	github.com/tree-sitter-grammars/tree-sitter-bicep v1.1.0
	github.com/tree-sitter/go-tree-sitter v0.25.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/go-chi/chi/v5 v5.2.3 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/mattn/go-pointer v0.0.1 // indirect
)

// The host.json and function.json reader is shared with the host emulator
// (internal/funcapp, standard library only); this module is nested in the
// repository's, so it may import that internal package.
require github.com/ordersink/orders-consumer v0.0.0

replace github.com/ordersink/orders-consumer => ../..
