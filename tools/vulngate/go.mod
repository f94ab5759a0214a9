module github.com/ordersink/orders-consumer/tools/vulngate

go 1.26.8
