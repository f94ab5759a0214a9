// want: Flex Consumption needs Microsoft.App/environments
param hostingPlan string
param location string

var isFlex = hostingPlan == 'FlexConsumption'

resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = {
  name: 'vnet'
  location: location
  properties: {
    addressSpace: {
      addressPrefixes: [
        '10.0.0.0/16'
      ]
    }
    subnets: [
      {
        name: 'app'
        properties: {
          addressPrefix: '10.0.1.0/24'
          delegations: [
            {
              name: 'app'
              properties: {
                serviceName: isFlex ? 'Microsoft.Web/serverFarms' : 'Microsoft.App/environments'
              }
            }
          ]
        }
      }
    ]
  }
}
