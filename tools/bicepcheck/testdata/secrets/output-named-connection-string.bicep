// want: output serviceBusConnectionString: the name says it carries a secret
param namespaceName string

output serviceBusConnectionString string = 'Endpoint=sb://${namespaceName}.servicebus.windows.net/'
