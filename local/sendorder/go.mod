module github.com/ordersink/orders-consumer/local/sendorder

go 1.26.8

require github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus v1.10.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.18.2 // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.2 // indirect
	github.com/Azure/go-amqp v1.4.0 // indirect
	golang.org/x/net v0.42.0 // indirect
	golang.org/x/text v0.27.0 // indirect
)
