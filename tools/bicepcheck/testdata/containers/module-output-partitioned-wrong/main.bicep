// The container name travels: db.bicep's resource -> its output -> main.bicep's module
// params -> app.bicep's parameter -> the app setting. The checker must follow every step.
module db 'modules/db.bicep' = {
  name: 'db'
}

module app 'modules/app.bicep' = {
  name: 'app'
  params: {
    keysContainerName: db.outputs.keysName
  }
}
