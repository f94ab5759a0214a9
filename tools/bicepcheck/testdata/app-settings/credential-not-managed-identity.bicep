// want: ServiceBusConnection__credential must be 'managedidentity'
param clientId string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: 'func'
}

var commonSettings = {
  AzureWebJobsStorage__accountName: 'st'
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: clientId
  AZURE_CLIENT_ID: clientId
  ServiceBusConnection__fullyQualifiedNamespace: 'sb.servicebus.windows.net'
  ServiceBusConnection__clientId: clientId
  CosmosDBConnection__accountEndpoint: 'https://cosmos.documents.azure.com:443/'
  CosmosDBConnection__credential: 'managedidentity'
  CosmosDBConnection__clientId: clientId
  COSMOS_ENDPOINT: 'https://cosmos.documents.azure.com:443/'
  COSMOS_DATABASE: 'shop'
  COSMOS_CONTAINER: 'orders'
}

resource appSettings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: commonSettings
}
