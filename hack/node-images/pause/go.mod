module kipam.io/hack/node-images/pause

go 1.21
