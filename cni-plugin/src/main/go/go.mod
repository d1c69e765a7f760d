module kipam.io/cni-plugin/kipam

go 1.26
