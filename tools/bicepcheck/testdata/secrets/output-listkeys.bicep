// want: fetches keys
resource st 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: 'st'
}

output storage object = st.listKeys()
