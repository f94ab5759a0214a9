// want: private DNS zone zone is linked to no virtual network
resource zone 'Microsoft.Network/privateDnsZones@2020-06-01' = {
  name: 'privatelink.documents.azure.com'
  location: 'global'
}
