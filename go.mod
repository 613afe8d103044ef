module github.com/kubesim/kubesim

go 1.26
