// want: serviceBusDataSender holds the id of Azure Service Bus Data Receiver
var roles = {
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataSender: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
}

output senderRole string = roles.serviceBusDataSender
