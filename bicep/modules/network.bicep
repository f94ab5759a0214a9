// Private networking (main.bicep vnetEnabled = true): a virtual network whose "app" subnet
// carries the function app's outbound traffic (VNet integration, both plans) out through a NAT
// gateway, private endpoints for the host storage and Cosmos DB, and the private DNS zones that
// make their public names resolve to those endpoints inside the network. Storage: blob (the host's locks, keys, timers
// and the packages) and table (its diagnostic events); no queue endpoint, because the host uses
// queue storage only for blob triggers, Durable Functions and queue bindings, which this app does
// not have (and the app holds no queue role; tools/bicepcheck rule network).
// storage.bicep and cosmos.bicep switch public network access off when this module is on.
//
// Service Bus stays on its public endpoint and accepts only Entra-authenticated clients. The app
// reaches it through a NAT gateway on the app subnet: with VNet integration the app's outbound
// traffic leaves through that subnet, and without an explicit outbound path it depends on Azure's
// default outbound access, which subnets created with network API 2025-07-01 or later no longer
// have (learn.microsoft.com/azure/virtual-network/ip-services/default-outbound-access; Microsoft's
// networking blog, "Private subnets by default", 2026) and which is not meant for production; the
// trigger would stall silently (tools/bicepcheck rule vnet-paths).
// Why not a private endpoint: Service Bus private endpoints need the Premium tier
// (learn.microsoft.com/azure/service-bus-messaging/private-link-service), billed per messaging
// unit per day, about 20 times Standard's base charge (azure.microsoft.com/pricing/details/
// service-bus); the NAT gateway is about USD 0.045 an hour (about 33 a month) plus USD 0.045 per GB
// processed, and its Standard public address about 3.65 a month
// (azure.microsoft.com/pricing/details/azure-nat-gateway; the stored copies of both pages render
// no figures, these are the list prices as third-party calculators quote them: check before
// deciding). App Service requires storage traffic to use private endpoints when a NAT gateway is
// on the subnet (learn.microsoft.com/azure/app-service/networking/nat-gateway-integration): blob
// and table have them here. Microsoft's Premium plan tutorial uses the same NAT gateway
// (learn.microsoft.com/azure/azure-functions/functions-how-to-use-nat-gateway).
param name string
param location string
param tags object

@allowed([
  'ElasticPremium'
  'FlexConsumption'
])
param hostingPlan string
param storageAccountName string
param cosmosAccountName string

@description('Address space of the network; the app subnet is its first /24, the private endpoints its second.')
param addressPrefix string = '10.40.0.0/16'

var isFlex = hostingPlan == 'FlexConsumption'

// Explicit outbound for the app subnet: one static address, so Service Bus (and anything else
// public the app calls) sees a known source.
resource natAddress 'Microsoft.Network/publicIPAddresses@2023-11-01' = {
  name: 'pip-nat-${name}'
  location: location
  tags: tags
  sku: {
    name: 'Standard'
  }
  properties: {
    publicIPAllocationMethod: 'Static'
    publicIPAddressVersion: 'IPv4'
  }
}

resource natGateway 'Microsoft.Network/natGateways@2023-11-01' = {
  name: 'nat-${name}'
  location: location
  tags: tags
  sku: {
    name: 'Standard'
  }
  properties: {
    publicIpAddresses: [
      {
        id: natAddress.id
      }
    ]
  }
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: {
      addressPrefixes: [
        addressPrefix
      ]
    }
    subnets: [
      {
        name: 'app'
        properties: {
          addressPrefix: cidrSubnet(addressPrefix, 24, 0)
          natGateway: {
            id: natGateway.id
          }
          // Flex Consumption integrates through Container Apps environments, Elastic Premium
          // through App Service server farms: the delegation must match the plan.
          delegations: [
            {
              name: 'app'
              properties: {
                serviceName: isFlex ? 'Microsoft.App/environments' : 'Microsoft.Web/serverFarms'
              }
            }
          ]
        }
      }
      {
        name: 'private-endpoints'
        properties: {
          addressPrefix: cidrSubnet(addressPrefix, 24, 1)
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

// One private endpoint per service the app reaches, each with its DNS zone.
var endpoints = [
  {
    name: 'blob'
    target: storage.id
    groupId: 'blob'
    zone: 'privatelink.blob.${environment().suffixes.storage}'
  }
  {
    name: 'table'
    target: storage.id
    groupId: 'table'
    zone: 'privatelink.table.${environment().suffixes.storage}'
  }
  {
    name: 'cosmos'
    target: cosmos.id
    groupId: 'Sql'
    zone: 'privatelink.documents.azure.com'
  }
]

resource zones 'Microsoft.Network/privateDnsZones@2020-06-01' = [for e in endpoints: {
  name: e.zone
  location: 'global'
  tags: tags
}]

resource zoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [for (e, i) in endpoints: {
  parent: zones[i]
  name: '${name}-link'
  location: 'global'
  tags: tags
  properties: {
    registrationEnabled: false
    virtualNetwork: {
      id: vnet.id
    }
  }
}]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2023-11-01' = [for e in endpoints: {
  name: 'pe-${e.name}-${name}'
  location: location
  tags: tags
  properties: {
    subnet: {
      id: resourceId('Microsoft.Network/virtualNetworks/subnets', vnet.name, 'private-endpoints')
    }
    privateLinkServiceConnections: [
      {
        name: e.name
        properties: {
          privateLinkServiceId: e.target
          groupIds: [
            e.groupId
          ]
        }
      }
    ]
  }
}]

resource zoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2023-11-01' = [for (e, i) in endpoints: {
  parent: privateEndpoints[i]
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [
      {
        name: e.name
        properties: {
          privateDnsZoneId: zones[i].id
        }
      }
    ]
  }
}]

output appSubnetId string = resourceId('Microsoft.Network/virtualNetworks/subnets', vnet.name, 'app')
